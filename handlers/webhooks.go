package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// webhookRequest registers a webhook: exactly one of agent_id, team and audit.
type webhookRequest struct {
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	AgentID        string   `json:"agent_id"`
	Team           string   `json:"team"`
	Audit          bool     `json:"audit"`
	IncludeContent bool     `json:"include_content"`
}

type webhookView struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	AgentID        string     `json:"agent_id,omitempty"`
	Team           string     `json:"team,omitempty"`
	Audit          bool       `json:"audit"`
	IncludeContent bool       `json:"include_content"`
	Status         string     `json:"status"` // active or failing
	FailingSince   *time.Time `json:"failing_since,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	// Secret signs every request (Standard Webhooks, whsec_...); only in the answer to
	// the POST that created it.
	Secret string `json:"secret,omitempty"`
}

func webhookViewOf(w *graph.Webhook) webhookView {
	return webhookView{ID: w.ID, URL: w.URL, Events: w.Events, AgentID: w.Agent, Team: w.Team, Audit: w.Audit,
		IncludeContent: w.Content, Status: w.Status, FailingSince: w.FailingAt, CreatedAt: w.CreatedAt, Secret: w.Secret}
}

type attemptView struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"` // none when no answer came
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms"`
}

type deliveryView struct {
	ID       string        `json:"id"`
	EventID  string        `json:"event_id"`
	Type     string        `json:"type"`
	Subject  string        `json:"subject"`
	GroupID  string        `json:"group_id"`
	At       time.Time     `json:"at"`
	Status   string        `json:"status"` // pending, delivered, failed or dropped
	NextAt   *time.Time    `json:"next_attempt_at,omitempty"`
	Attempts []attemptView `json:"attempts"`
}

func deliveryViewOf(d *graph.Delivery) deliveryView {
	v := deliveryView{ID: d.ID, EventID: d.EventID, Type: d.Kind, Subject: d.Subject, GroupID: d.GroupID, At: d.At,
		Status: d.Status, Attempts: []attemptView{}}
	if d.Status == graph.DeliveryPending {
		next := d.NextAt
		v.NextAt = &next
	}
	for _, a := range d.Attempts {
		v.Attempts = append(v.Attempts, attemptView{At: a.At, StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.Millis})
	}
	return v
}

func (a *api) createWebhook(c echo.Context) error {
	var req webhookRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	w, err := a.svc.CreateWebhook(c.Request().Context(), callOf(c), service.WebhookInput{URL: req.URL, Events: req.Events,
		AgentID: req.AgentID, Team: req.Team, Audit: req.Audit, Content: req.IncludeContent})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, webhookViewOf(w))
}

func (a *api) listWebhooks(c echo.Context) error {
	if err := queryParams(c); err != nil {
		return err
	}
	hooks, err := a.svc.ListWebhooks(c.Request().Context(), callOf(c))
	if err != nil {
		return err
	}
	out := struct {
		Items []webhookView `json:"items"`
	}{Items: []webhookView{}}
	for _, w := range hooks {
		out.Items = append(out.Items, webhookViewOf(w))
	}
	return c.JSON(http.StatusOK, out)
}

func (a *api) getWebhook(c echo.Context) error {
	w, err := a.svc.GetWebhook(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, webhookViewOf(w))
}

func (a *api) deleteWebhook(c echo.Context) error {
	if err := a.svc.DeleteWebhook(c.Request().Context(), callOf(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *api) webhookDeliveries(c echo.Context) error {
	if err := queryParams(c, "limit"); err != nil {
		return err
	}
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ds, err := a.svc.WebhookDeliveries(c.Request().Context(), callOf(c), c.Param("id"), pr.Limit)
	if err != nil {
		return err
	}
	out := struct {
		Items []deliveryView `json:"items"`
	}{Items: []deliveryView{}}
	for _, d := range ds {
		out.Items = append(out.Items, deliveryViewOf(d))
	}
	return c.JSON(http.StatusOK, out)
}
